use courier::typed::{endpoint, Group, Http};

#[derive(serde::Deserialize)]
pub struct User;

#[derive(courier::Group)]
pub struct Users {
    #[courier(renam = "getUser")]
    pub get: Http<User, u64>,
}

#[allow(dead_code)]
async fn call<C: courier::typed::dispatch::Dispatch>(users: UsersView<'_, C>) -> Result<User, C::Error> {
    users.get(7).await
}

fn main() {
    let _ = Group::new(Users {
        get: endpoint().get("/:id"),
    });
}
