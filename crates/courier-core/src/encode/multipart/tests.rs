use super::*;
use crate::encode::FilePart;
use serde_json::json;

fn encode(form: Form, defaults: Value) -> (String, String) {
    let defaults = match defaults {
        Value::Object(map) => map,
        _ => Map::new(),
    };
    match encode_form(form, Some(&defaults)) {
        Ok(EncodedBody::Multipart { boundary, bytes }) => {
            let text = String::from_utf8(bytes.to_vec()).expect("utf-8 test body");
            (boundary, text)
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn texts_then_defaults_then_files() {
    let form = Form::new()
        .file(
            "photo",
            FilePart::new("PNG")
                .filename("a.png")
                .content_type("image/png"),
        )
        .text("title", "Hi")
        .text("tag", "x");
    // Keys in sorted order, so this holds with or without serde_json's `preserve_order`.
    let (b, body) = encode(
        form,
        json!({"flag": true, "n": 7, "nested": {"a": [1]}, "nil": null, "s": "raw \"s\"", "title": "ignored"}),
    );
    let expected = format!(
        "--{b}\r\nContent-Disposition: form-data; name=\"title\"\r\n\r\nHi\r\n\
         --{b}\r\nContent-Disposition: form-data; name=\"tag\"\r\n\r\nx\r\n\
         --{b}\r\nContent-Disposition: form-data; name=\"flag\"\r\n\r\ntrue\r\n\
         --{b}\r\nContent-Disposition: form-data; name=\"n\"\r\n\r\n7\r\n\
         --{b}\r\nContent-Disposition: form-data; name=\"nested\"\r\n\r\n{{\"a\":[1]}}\r\n\
         --{b}\r\nContent-Disposition: form-data; name=\"s\"\r\n\r\nraw \"s\"\r\n\
         --{b}\r\nContent-Disposition: form-data; name=\"photo\"; filename=\"a.png\"\r\n\
         Content-Type: image/png\r\n\r\nPNG\r\n\
         --{b}--\r\n"
    );
    assert_eq!(body, expected);
}

#[test]
fn defaults_skip_names_the_form_has_even_as_files() {
    let form = Form::new().file("doc", FilePart::new("x"));
    let (_, body) = encode(form, json!({"doc": "default"}));
    assert!(!body.contains("default"), "{body}");
}

#[test]
fn file_without_name_or_type_is_a_blob_of_octets() {
    let (_, body) = encode(Form::new().file("f", FilePart::new("x")), json!({}));
    assert!(
        body.contains(
            "name=\"f\"; filename=\"blob\"\r\nContent-Type: application/octet-stream\r\n\r\nx\r\n"
        ),
        "{body}"
    );
}

#[test]
fn empty_form_is_just_the_closing_delimiter() {
    let (b, body) = encode(Form::new(), json!({}));
    assert_eq!(body, format!("--{b}--\r\n"));
    assert!(b.len() <= 70, "RFC 2046 limit");
}

#[test]
fn names_cannot_break_out_of_quotes_or_lines() {
    let form = Form::new()
        .text("a\"b\r\nX-Evil: 1", "v")
        .file("f", FilePart::new("x").filename("x\".png\n"));
    let (_, body) = encode(form, json!({}));
    assert!(body.contains("name=\"a%22b%0D%0AX-Evil: 1\""), "{body}");
    assert!(body.contains("filename=\"x%22.png%0A\""), "{body}");
}

#[test]
fn content_type_is_checked() {
    for ok in [
        "image/png",
        "text/plain; charset=utf-8",
        " a/b ",
        "application/vnd.x+json",
    ] {
        assert!(is_content_type(ok), "{ok:?}");
    }
    for bad in [
        "",
        "png",
        "image/",
        "/png",
        "a/b/c",
        "a b/c",
        "a/b\r\nX: 1",
        "é/x",
        "a/b; x=\u{7f}",
    ] {
        assert!(!is_content_type(bad), "{bad:?}");
    }
    let form = Form::new().file("up", FilePart::new("x").content_type("text/plain\r\nX: 1"));
    let err = encode_form(form, None).unwrap_err();
    assert!(
        matches!(&err, EncodeError::InvalidContentType { part, .. } if part == "up"),
        "{err:?}"
    );
    assert!(err.to_string().contains("`up`"), "{err}");
}

#[test]
fn picks_another_boundary_when_one_occurs_in_a_part() {
    let content = b"--taken--";
    let parts = [Prepared {
        head: disposition("used-in-head", None),
        content: Content::Bytes(Bytes::from_static(content)),
    }];
    let mut candidates = ["taken", "used-in-head", "free"]
        .into_iter()
        .map(String::from);
    let boundary = pick_boundary(&parts, || candidates.next().unwrap_or_default());
    assert_eq!(boundary, "free");
}

#[test]
fn boundaries_differ_between_calls() {
    let a = candidate();
    let b = candidate();
    assert_ne!(a, b);
    assert!(a.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'-'));
}

/// The bytes of a streamed form's body, and its boundary.
async fn streamed_text(encoded: EncodedBody) -> (String, Result<String, BoxError>) {
    use http_body_util::BodyExt;
    let EncodedBody::MultipartStream { boundary, body } = encoded else {
        panic!("not streamed: {encoded:?}")
    };
    let read = body
        .collect()
        .await
        .map(|collected| String::from_utf8(collected.to_bytes().to_vec()).unwrap());
    (boundary, read)
}

/// A body of `chunks`, read as it is sent.
fn chunked(chunks: &[&'static str]) -> Body {
    let chunks: Vec<Result<Bytes, std::io::Error>> = chunks
        .iter()
        .map(|c| Ok(Bytes::from_static(c.as_bytes())))
        .collect();
    Body::from_stream(stream::iter(chunks))
}

#[tokio::test]
async fn a_streamed_form_writes_what_the_same_form_in_memory_writes() {
    let defaults = json!({"by": "courier", "title": "ignored"});
    let Value::Object(defaults) = defaults else {
        unreachable!()
    };
    let in_memory = Form::new()
        .text("title", "Hi")
        .file("a", FilePart::new("first file").filename("a.txt"))
        .file("b", FilePart::new("PNG...").content_type("image/png"))
        .text("late", "text");
    let EncodedBody::Multipart { boundary, bytes } =
        encode_form(in_memory, Some(&defaults)).unwrap()
    else {
        panic!("a form in memory is one buffer")
    };
    let expected = String::from_utf8(bytes.to_vec()).unwrap();

    let arriving = stream::iter([
        Ok::<_, std::io::Error>((
            "b".to_owned(),
            Part::File(FilePart::streamed(chunked(&["PN", "G.", ".."])).content_type("image/png")),
        )),
        Ok(("late".to_owned(), Part::Text("text".to_owned()))),
    ]);
    let streamed = Form::new()
        .file(
            "a",
            FilePart::streamed(chunked(&["first", " ", "file"])).filename("a.txt"),
        )
        .text("title", "Hi")
        .arriving(arriving);
    assert!(streamed.is_streamed());
    let (streamed_boundary, body) =
        streamed_text(encode_form(streamed, Some(&defaults)).unwrap()).await;
    // In memory the texts go first; streamed, the arriving text comes where it arrives.
    let expected = expected.replace(&boundary, &streamed_boundary);
    let late = format!(
        "--{streamed_boundary}\r\nContent-Disposition: form-data; name=\"late\"\r\n\r\ntext\r\n"
    );
    let expected_streamed = expected.replacen(&late, "", 1).replace(
        &format!("--{streamed_boundary}--\r\n"),
        &format!("{late}--{streamed_boundary}--\r\n"),
    );
    assert_eq!(body.unwrap(), expected_streamed);
}

#[tokio::test]
async fn an_arriving_file_whose_content_type_cannot_be_sent_ends_the_body() {
    let arriving = stream::iter([Ok::<_, std::io::Error>((
        "up".to_owned(),
        Part::File(FilePart::new("x").content_type("text/plain\r\nX-Injected: 1")),
    ))]);
    let form = Form::new().text("a", "1").arriving(arriving);
    let (_, body) = streamed_text(encode_form(form, None).unwrap()).await;
    let err = body.unwrap_err();
    assert!(err.to_string().contains("`up`"), "{err}");
}

#[tokio::test]
async fn an_error_while_parts_arrive_ends_the_body_with_it() {
    let arriving = stream::iter([
        Ok(("a".to_owned(), Part::Text("1".to_owned()))),
        Err(std::io::Error::other("the upload broke off")),
    ]);
    let (_, body) = streamed_text(encode_form(Form::new().arriving(arriving), None).unwrap()).await;
    assert_eq!(body.unwrap_err().to_string(), "the upload broke off");

    let broken = Body::from_stream(stream::iter([
        Ok(Bytes::from_static(b"half")),
        Err(std::io::Error::other("the file broke off")),
    ]));
    let form = Form::new().file("f", FilePart::streamed(broken));
    let (_, body) = streamed_text(encode_form(form, None).unwrap()).await;
    assert_eq!(body.unwrap_err().to_string(), "the file broke off");
}
