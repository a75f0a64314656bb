use courier::typed::{endpoint, Group, Http};

#[derive(serde::Deserialize)]
pub struct Post;

#[derive(courier::Group)]
pub struct Posts {
    pub list: Http<Vec<Post>>,
}

#[derive(courier::Group)]
pub struct Users {
    pub with: Group<Posts>,
    pub posts: Group<Posts>,
}

#[allow(dead_code)]
async fn call<C: courier::typed::dispatch::Dispatch>(users: UsersView<'_, C>) -> Result<Vec<Post>, C::Error> {
    users.posts().list().await
}

fn main() {
    let posts = || {
        Group::new(Posts {
            list: endpoint().get(""),
        })
    };
    let _ = Group::new(Users {
        with: posts(),
        posts: posts(),
    });
}
