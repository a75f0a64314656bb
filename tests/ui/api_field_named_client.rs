use courier::typed::{Group, Http};

#[derive(serde::Deserialize)]
pub struct User;

#[derive(courier::Group)]
pub struct Users {
    pub me: Http<User>,
}

#[derive(courier::Api)]
pub struct Example {
    pub client: Group<Users>,
}

#[allow(dead_code)]
fn caller<C: courier::typed::dispatch::Dispatch>(client: &ExampleClient<C>) -> &C {
    client.client()
}

fn main() {}
