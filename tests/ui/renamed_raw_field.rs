// A field named `raw` would have the view's own `raw()` as its method: renaming the endpoint
// does not help, the field needs another name.
use courier::typed::{endpoint, Group, Http};

#[derive(serde::Deserialize)]
pub struct Blob;

#[derive(courier::Group)]
pub struct Files {
    #[courier(rename = "raw_data")]
    pub raw: Http<Blob>,
}

fn main() {
    let _ = Group::new(Files {
        raw: endpoint().get("/raw"),
    });
}
