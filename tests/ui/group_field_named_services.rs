// A field named `services` would have the view's own `services()` as its method: the field needs
// another name (the endpoint may keep the name `services` with `#[courier(rename = "services")]`).
use courier::typed::{endpoint, Group, Http};

#[derive(serde::Deserialize)]
pub struct Service;

#[derive(courier::Group)]
pub struct Catalog {
    pub services: Http<Vec<Service>>,
}

fn main() {
    let _ = Group::new(Catalog {
        services: endpoint().get("/services"),
    });
}
