use courier::typed::Http;

#[derive(serde::Deserialize)]
pub struct User;

#[derive(courier::Group)]
pub struct Users {
    pub get: Http<User, u64>,
    #[courier(rename = "get")]
    pub fetch: Http<User, u64>,
}

fn main() {}
