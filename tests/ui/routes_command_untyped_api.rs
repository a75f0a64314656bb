// An API that does not derive `courier::TypeScript` cannot give its types to the routes
// command: the error says what to derive, and how to write an untyped module instead.
use courier::typed::{endpoint, Group, Http};
use courier::ApiDef;

#[derive(courier::Group)]
pub struct Users {
    pub get: Http<String, u32>,
}

#[derive(courier::Api)]
pub struct Example {
    pub users: Group<Users>,
}

fn main() {
    let users = Group::new(Users { get: endpoint().get("/:id").expose(true) });
    let api = ApiDef::builder()
        .for_routes()
        .build_typed(Example { users })
        .unwrap();
    let _ = courier::routes::Command::new("demo", &api);
}
