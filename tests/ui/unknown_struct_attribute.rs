use courier::typed::Http;

#[derive(serde::Deserialize)]
pub struct User;

#[derive(courier::Group)]
#[courier(rename = "people")]
pub struct Users {
    pub me: Http<User>,
}

#[allow(dead_code)]
async fn call<C: courier::typed::dispatch::Dispatch>(users: UsersView<'_, C>) -> Result<User, C::Error> {
    users.me().await
}

fn main() {}
