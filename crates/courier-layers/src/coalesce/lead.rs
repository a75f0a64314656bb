//! The leader of a call: it drives the inner future itself, and hands the call to a task only
//! when it leaves while others wait on it.

use super::answer::{buffer, deliver, Outcome, Sender};
use super::error::Shared;
use super::flight::{Lead, Ticket};
use bytes::Bytes;
use courier_core::context::ServedRequest;
use courier_core::BoxError;
use http::Response;
use std::future::{poll_fn, Future};
use std::pin::{pin, Pin};
use std::task::{ready, Context, Poll};
use tokio::runtime::Handle;
use tokio::task::AbortHandle;
use tracing::Instrument;

/// The leader's hold on its call until the response head arrives.
pub(super) struct Leader<F> {
    /// The inner future and the call's ticket; `None` once the head has arrived.
    ///
    /// The future is boxed so that it can move to a task after it has been polled: one
    /// allocation, where running every call in a task of its own would cost a task. It stays
    /// its own type, polled without dynamic dispatch, and `hand_off` (made in `new`, where the
    /// response body's type is known) is what moves it. Measured in a direct call
    /// (`benches/client.rs`, the `caller` client, callgrind, instructions per call): each
    /// leader's call spawned as a task and awaited, in place of this box, cost 15 % more at
    /// concurrency 1 (33,399 → 38,458) and 10.5 % more at 64 (37,478 → 41,413).
    call: Option<(Pin<Box<F>>, Ticket)>,
    hand_off: fn(Pin<Box<F>>, Ticket),
    /// Set while the inner future is polled: a leader dropped with it set is unwinding from a
    /// panic of that future, which is not run again.
    polling: bool,
}

impl<F> Leader<F> {
    /// Leads the call `lead` registered, made by `call` (the inner service's call) and boxed
    /// here.
    pub(super) fn new<B, E>(call: impl FnOnce() -> F, lead: Lead) -> Self
    where
        F: Future<Output = Result<Response<B>, E>> + Send + 'static,
        E: Into<BoxError>,
        B: http_body::Body<Data = Bytes> + Send + 'static,
        B::Error: Into<BoxError>,
    {
        // `lead` abandons the call if `call` panics.
        let future = Box::pin(call());
        Self {
            call: lead.take().map(|ticket| (future, ticket)),
            hand_off: hand_off::<F, B, E>,
            polling: false,
        }
    }

    /// Polls the inner future. When it is ready (the response head, or an error), the call is
    /// forgotten and this returns its output with the senders of the waiters still waiting.
    pub(super) fn poll_head(&mut self, cx: &mut Context<'_>) -> Poll<(F::Output, Vec<Sender>)>
    where
        F: Future,
    {
        let Some((future, _)) = &mut self.call else {
            panic!("coalesce leader polled after its head arrived");
        };
        self.polling = true;
        let poll = future.as_mut().poll(cx);
        self.polling = false;
        let Poll::Ready(output) = poll else {
            return Poll::Pending;
        };
        let senders = match self.call.take() {
            Some((_, ticket)) => ticket.answered(),
            None => Vec::new(),
        };
        Poll::Ready((output, senders))
    }
}

impl<F> Drop for Leader<F> {
    fn drop(&mut self) {
        let Some((future, ticket)) = self.call.take() else {
            return;
        };
        if self.polling {
            ticket.abandon();
        } else if ticket.leave() {
            (self.hand_off)(future, ticket);
        }
        // Otherwise nobody waits: `future` is dropped here, which cancels the upstream call.
    }
}

/// Goes on with a call whose leader left before the head arrived, for the waiters: in a task,
/// in the tracing span and served-request scope the leader was dropped in. Outside a tokio
/// runtime there is no task to go on in, and the waiters end with `Interrupted`.
fn hand_off<F, B, E>(future: Pin<Box<F>>, ticket: Ticket)
where
    F: Future<Output = Result<Response<B>, E>> + Send + 'static,
    E: Into<BoxError>,
    B: http_body::Body<Data = Bytes> + Send + 'static,
    B::Error: Into<BoxError>,
{
    let Ok(runtime) = Handle::try_current() else {
        ticket.abandon();
        return;
    };
    let unanswered = Unanswered(Some(ticket.clone()));
    let task = async move {
        let mut unanswered = unanswered;
        // The error converted at once: `E` need not be `Send`.
        let output = future.await.map_err(Into::into);
        let senders = unanswered.answered();
        match output {
            Ok(response) => serve(buffer(response), senders).await,
            Err(error) => deliver(senders, &Err(Shared::new(error))),
        }
    };
    ticket.handed_off(spawn(&runtime, task));
}

/// Owned by a handed-off call's task until the head arrives: however the task ends before that
/// (aborted, panicked, dropped with its runtime), the slot goes and the waiters are told.
struct Unanswered(Option<Ticket>);

impl Unanswered {
    fn answered(&mut self) -> Vec<Sender> {
        self.0
            .take()
            .map(|ticket| ticket.answered())
            .unwrap_or_default()
    }
}

impl Drop for Unanswered {
    fn drop(&mut self) {
        if let Some(ticket) = self.0.take() {
            ticket.abandon();
        }
    }
}

/// The leader's hold on its call after the head arrived with waiters: reading the body once
/// for all of them.
pub(super) struct Collector {
    /// Boxed: only calls that others joined come here, and the response future names the inner
    /// future's type, not its body's. `None` once read.
    collect: Option<Pin<Box<dyn Future<Output = Outcome> + Send>>>,
    senders: Vec<Sender>,
    /// As [`Leader::polling`].
    polling: bool,
}

impl Collector {
    pub(super) fn new<B>(response: Response<B>, senders: Vec<Sender>) -> Self
    where
        B: http_body::Body<Data = Bytes> + Send + 'static,
        B::Error: Into<BoxError>,
    {
        Self {
            collect: Some(Box::pin(buffer(response))),
            senders,
            polling: false,
        }
    }

    /// Reads the body to its end, then gives each waiter its copy and returns the leader's.
    pub(super) fn poll_answer(&mut self, cx: &mut Context<'_>) -> Poll<Outcome> {
        let Some(collect) = &mut self.collect else {
            panic!("coalesce leader polled after its answer arrived");
        };
        self.polling = true;
        let poll = collect.as_mut().poll(cx);
        self.polling = false;
        let outcome = ready!(poll);
        self.collect = None;
        deliver(std::mem::take(&mut self.senders), &outcome);
        Poll::Ready(outcome)
    }
}

impl Drop for Collector {
    fn drop(&mut self) {
        let Some(collect) = self.collect.take() else {
            return;
        };
        let senders = std::mem::take(&mut self.senders);
        if self.polling || senders.iter().all(Sender::is_closed) {
            return;
        }
        // Without a runtime, the senders are dropped here and the waiters end with
        // `Interrupted`.
        if let Ok(runtime) = Handle::try_current() {
            spawn(&runtime, serve(collect, senders));
        }
    }
}

/// Reads the body for `senders` and gives each its copy; stops, dropping the body (and so the
/// upstream call), once every waiter has left.
async fn serve<C: Future<Output = Outcome>>(collect: C, mut senders: Vec<Sender>) {
    let mut collect = pin!(collect);
    let outcome = poll_fn(|cx| {
        // Waits on one open sender at a time: when it closes, the next is checked.
        if senders
            .iter_mut()
            .all(|sender| sender.poll_closed(cx).is_ready())
        {
            return Poll::Ready(None);
        }
        collect.as_mut().poll(cx).map(Some)
    })
    .await;
    if let Some(outcome) = outcome {
        deliver(senders, &outcome);
    }
}

/// Spawns `task` on `runtime` in the current tracing span and served-request scope.
fn spawn<T>(runtime: &Handle, task: T) -> AbortHandle
where
    T: Future<Output = ()> + Send + 'static,
{
    let task = task.instrument(tracing::Span::current());
    let handle = match ServedRequest::current() {
        Some(served) => runtime.spawn(served.scope(task)),
        None => runtime.spawn(task),
    };
    handle.abort_handle()
}
