use courier::typed::{endpoint, Group, Http};

#[derive(serde::Deserialize)]
pub struct User;

#[derive(courier::Group)]
pub struct Users {
    pub get: Http<User, u64>,
    pub options: Http<User>,
}

#[derive(courier::Api)]
pub struct Example {
    pub users: Group<Users>,
}

#[allow(dead_code)]
async fn call<C: courier::typed::dispatch::Dispatch>(client: &ExampleClient<C>) -> Result<User, C::Error> {
    client.users().get(7).await
}

fn main() {
    let _ = Group::new(Users {
        get: endpoint().get("/:id"),
        options: endpoint().get("/options"),
    });
}
