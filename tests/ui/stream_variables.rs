// A stream cannot be a call's variables: it is not `Serialize` and not a `Form`, so the call
// does not compile, through `Caller` and `ProxyCaller` alike (earlier still than the
// PROXY_VARIABLE_NOT_SERIALIZABLE refusal made before anything is sent). Files go in
// a `Form`.
use courier::typed::{Group, Http, Mutation};
use courier::typed::dispatch::Dispatch;

#[derive(serde::Deserialize)]
pub struct Receipt;

pub type Chunks = futures_util::stream::Iter<std::vec::IntoIter<Vec<u8>>>;

#[derive(courier::Group)]
pub struct Files {
    pub upload: Http<Receipt, Chunks, Mutation>,
}

#[derive(courier::Api)]
pub struct Example {
    pub files: Group<Files>,
}

#[allow(dead_code)]
async fn call<C: Dispatch>(client: &ExampleClient<C>, chunks: Chunks) -> Result<Receipt, C::Error> {
    client.files().upload(chunks).await
}

fn main() {}
