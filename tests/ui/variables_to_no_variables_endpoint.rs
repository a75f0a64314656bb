use courier::typed::{Group, Http, Mutation};
use courier::typed::dispatch::Dispatch;

#[derive(serde::Deserialize)]
pub struct User;
#[derive(serde::Deserialize)]
pub struct Post;
#[derive(serde::Serialize)]
pub struct UserId(pub u64);
#[derive(serde::Serialize)]
pub struct PostId(pub u64);
#[derive(serde::Serialize)]
pub struct NewUser;

#[derive(courier::Group)]
pub struct Users {
    pub get: Http<User, UserId>,
    pub me: Http<User>,
    pub create: Http<User, NewUser, Mutation>,
}

#[derive(courier::Api)]
pub struct Example {
    pub users: Group<Users>,
}

#[allow(dead_code)]
async fn call<C: Dispatch>(client: &ExampleClient<C>) -> Result<User, C::Error> {
    client.users().me(UserId(1)).await
}

fn main() {}
