use courier::typed::{endpoint, Group, Http};

#[derive(serde::Deserialize)]
pub struct User;

#[derive(courier::Group)]
pub struct Users {
    #[courier(rename = "with")]
    pub current: Http<User>,
}

#[allow(dead_code)]
async fn call<C: courier::typed::dispatch::Dispatch>(users: UsersView<'_, C>) -> Result<User, C::Error> {
    users.current().await
}

fn main() {
    let _ = Group::new(Users {
        current: endpoint().get("/with"),
    });
}
