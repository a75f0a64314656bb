#[derive(courier::Api)]
pub enum Example {
    Users,
}

fn main() {}
