use courier::typed::{endpoint, Group, Http, Mutation};

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

fn main() {
    let _ = Group::new(Users {
        get: endpoint().get("/:id"),
        me: endpoint().get("/me"),
        create: endpoint().get(""),
    });
}
