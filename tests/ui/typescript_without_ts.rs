// An endpoint whose response does not derive `ts_rs::TS` cannot name its TypeScript types.
use courier::typed::{Group, Http};

#[derive(serde::Deserialize)]
pub struct User {
    pub id: u64,
}

#[derive(courier::Group, courier::TypeScript)]
pub struct Users {
    pub get: Http<User>,
}

#[derive(courier::Api, courier::TypeScript)]
pub struct Example {
    pub users: Group<Users>,
}

fn main() {}
