use courier::typed::{endpoint, Group, Http};

#[derive(serde::Deserialize)]
pub struct User;

#[derive(courier::Group)]
pub struct Users(pub Http<User>);

#[derive(courier::Api)]
pub struct Example {
    pub users: Group<Users>,
}

fn main() {
    let _ = courier::ApiDef::builder().build_typed(Example {
        users: Group::new(Users(endpoint().get("/me"))),
    });
}
