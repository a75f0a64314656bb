//! Which requests may share a call, and the key that finds a call in flight and says two
//! requests are identical.

use courier_core::{EndpointMeta, Kind};
use http::header::{ACCEPT, UPGRADE};
use http::uri::{Authority, PathAndQuery};
use http::{HeaderName, HeaderValue, Request};
use std::fmt;
use std::hash::{BuildHasher, Hasher};

/// Per-request tracing headers: they name a request, never change its response.
pub(super) const TRACING_HEADERS: [HeaderName; 3] = [
    HeaderName::from_static("x-request-id"),
    HeaderName::from_static("traceparent"),
    HeaderName::from_static("tracestate"),
];

/// Whether `request` is a read that may share a call: its `EndpointMeta` says it reads and
/// allows coalescing, or, without one, its method reads. (Its headers may still rule it out:
/// see [`Key::new`].)
pub(super) fn reads<B>(request: &Request<B>) -> bool {
    Kind::of_request(request) == Kind::Query
        && request
            .extensions()
            .get::<EndpointMeta>()
            .is_none_or(EndpointMeta::get_coalesce)
}

/// Whether a request header asks for a response that cannot be read to its end and copied: an
/// event stream, or a protocol upgrade.
fn wants_stream(name: &HeaderName, value: &HeaderValue) -> bool {
    name == UPGRADE
        || name == ACCEPT
            && value
                .as_bytes()
                .windows(b"text/event-stream".len())
                .any(|window| window.eq_ignore_ascii_case(b"text/event-stream"))
}

/// Everything that can change a read's response: method, full URI, headers (credentials
/// included) but the ignored ones, and body bytes, written into one buffer that compares as
/// bytes.
///
/// Headers are written in the order of their names, the values of one name in their own order,
/// so the order of different names does not matter while the order of one name's values does,
/// as on the wire. A header map filled in name order (the usual case) is written as it
/// iterates; only another order is sorted first.
///
/// The buffer starts with what is cheap to hash and tells one service's reads apart: the
/// method, the path and query, and the body's length. That part is [hashed](Key::hash) to find
/// a call in flight; the scheme and authority (the same for every read of an endpoint, almost
/// always), the body and the headers follow, and the whole buffer is compared on a hash hit, so
/// a hash collision never shares a call.
///
/// A key of up to [`INLINE`] bytes, the usual read's (method, URI, a few headers), is held
/// inline; a longer one (long credentials, a body) is allocated.
#[derive(PartialEq, Eq)]
pub(super) struct Key {
    bytes: Buffer,
    /// How much of `bytes` is hashed.
    hashed: usize,
}

/// The longest key held without an allocation.
const INLINE: usize = 128;

/// A key's bytes: inline, or on the heap when longer than [`INLINE`].
enum Buffer {
    Inline { len: usize, bytes: [u8; INLINE] },
    Heap(Vec<u8>),
}

impl Buffer {
    /// An empty buffer for exactly `len` bytes.
    fn with_len(len: usize) -> Self {
        if len <= INLINE {
            Self::Inline {
                len: 0,
                bytes: [0; INLINE],
            }
        } else {
            Self::Heap(Vec::with_capacity(len))
        }
    }

    fn as_slice(&self) -> &[u8] {
        match self {
            Self::Inline { len, bytes } => &bytes[..*len],
            Self::Heap(bytes) => bytes,
        }
    }

    fn extend(&mut self, more: &[u8]) {
        match self {
            Self::Inline { len, bytes } => {
                // The buffer was made for the key's exact length, computed before writing.
                bytes[*len..*len + more.len()].copy_from_slice(more);
                *len += more.len();
            }
            Self::Heap(bytes) => bytes.extend_from_slice(more),
        }
    }
}

impl PartialEq for Buffer {
    fn eq(&self, other: &Self) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl Eq for Buffer {}

/// Every field is written as its length (four bytes: a field of 4 GiB or more is never keyed)
/// then its bytes, so that no two different requests write the same bytes. An absent URI part
/// is written as this length, which no keyed field has.
const ABSENT: u32 = u32::MAX;

impl Key {
    /// The key of `request`, whose body is `body`; `None` when a header asks for an event
    /// stream or a protocol upgrade, whose response cannot be shared, or when a field is 4 GiB
    /// or longer (such a read is sent unshared).
    pub(super) fn new<B>(
        request: &Request<B>,
        body: &[u8],
        ignored: &[HeaderName],
    ) -> Option<Self> {
        let headers = request.headers();
        let kept = |(name, _): &(&HeaderName, &HeaderValue)| !ignored.contains(name);

        let uri = request.uri();
        let hashed_parts = [
            Some(request.method().as_str()),
            uri.path_and_query().map(PathAndQuery::as_str),
        ];
        let other_parts = [uri.scheme_str(), uri.authority().map(Authority::as_str)];
        // A field's room in the buffer; `None` for one too long to key.
        let field = |len: usize| (len < ABSENT as usize).then_some(size_of::<u32>() + len);
        let mut len = field(body.len())?;
        for part in hashed_parts.iter().chain(&other_parts) {
            len += field(part.map_or(0, str::len))?;
        }
        // One pass over the headers for the stream check, the buffer's size, and whether the
        // names come in order.
        let mut in_order = true;
        let mut previous: Option<&HeaderName> = None;
        for header in headers {
            let (name, value) = header;
            if wants_stream(name, value) {
                return None;
            }
            if !kept(&header) {
                continue;
            }
            len += field(name.as_str().len())? + field(value.len())?;
            in_order &= previous.is_none_or(|previous| previous.as_str() <= name.as_str());
            previous = Some(name);
        }

        let mut key = Writer(Buffer::with_len(len));
        for part in hashed_parts {
            key.optional(part.map(str::as_bytes));
        }
        key.len(body.len());
        let hashed = key.0.as_slice().len();
        for part in other_parts {
            key.optional(part.map(str::as_bytes));
        }
        key.0.extend(body);
        if in_order {
            for (name, value) in headers.iter().filter(kept) {
                key.header(name, value);
            }
        } else {
            let mut sorted: Vec<_> = headers.iter().filter(kept).collect();
            // Stable: the values of one name keep their order.
            sorted.sort_by(|(a, _), (b, _)| a.as_str().cmp(b.as_str()));
            for (name, value) in sorted {
                key.header(name, value);
            }
        }
        debug_assert_eq!(key.0.as_slice().len(), len);
        Some(Self {
            bytes: key.0,
            hashed,
        })
    }

    /// The hash a call with this key is found by: of the method, path and query, and body
    /// length, written at the start of the key, hashed in one go.
    pub(super) fn hash(&self, hasher: &impl BuildHasher) -> u64 {
        let mut state = hasher.build_hasher();
        state.write(&self.bytes.as_slice()[..self.hashed]);
        state.finish()
    }

    /// The key of `request`, or `None` when its body is streamed (a streamed body cannot be
    /// compared, and is sent once, unshared) or it asks for a stream.
    #[cfg(test)]
    pub(super) fn of<B: crate::BufferedBody>(
        request: &Request<B>,
        ignored: &[HeaderName],
    ) -> Option<Self> {
        Self::new(request, request.body().buffered()?, ignored)
    }
}

impl fmt::Debug for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Key")
            .field(&String::from_utf8_lossy(self.bytes.as_slice()))
            .finish()
    }
}

struct Writer(Buffer);

impl Writer {
    /// Writes a length, which [`Key::new`] checked to be below [`ABSENT`].
    fn len(&mut self, len: usize) {
        let len = u32::try_from(len).unwrap_or(ABSENT);
        self.0.extend(&len.to_ne_bytes());
    }

    fn field(&mut self, bytes: &[u8]) {
        self.len(bytes.len());
        self.0.extend(bytes);
    }

    fn optional(&mut self, bytes: Option<&[u8]>) {
        match bytes {
            Some(bytes) => self.field(bytes),
            None => self.0.extend(&ABSENT.to_ne_bytes()),
        }
    }

    fn header(&mut self, name: &HeaderName, value: &HeaderValue) {
        self.field(name.as_str().as_bytes());
        self.field(value.as_bytes());
    }
}
