use courier::typed::{endpoint, Group, Http};

#[derive(serde::Deserialize)]
pub struct User;

#[derive(courier::Group)]
pub struct Users {
    pub me: Http<User>,
}

#[derive(courier::Api)]
pub struct Example {
    pub users: Group<Users>,
    pub health: Http<String>,
}

#[allow(dead_code)]
async fn call<C: courier::typed::dispatch::Dispatch>(client: &ExampleClient<C>) -> Result<User, C::Error> {
    client.users().me().await
}

fn main() {
    let _ = courier::ApiDef::builder().build_typed(Example {
        users: Group::new(Users {
            me: endpoint().get("/me"),
        }),
        health: endpoint().get("/health"),
    });
}
