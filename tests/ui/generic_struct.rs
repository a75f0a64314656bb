use courier::typed::Http;

#[derive(courier::Group)]
pub struct Paged<T> {
    pub list: Http<Vec<T>>,
}

fn main() {}
