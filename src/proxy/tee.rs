//! A body passed on frame by frame as it arrives, keeping its first bytes for the record.
//!
//! The proxy never holds a whole upload or a whole answer: each frame goes on as soon as it is
//! read, and only the first `cap` bytes (the body cap) are kept, for the rule engine. What is
//! kept past that is only the count. When the body ends, fails, or is dropped (the client went
//! away), `then` runs once with what was kept and whether the body passed whole.

use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use bytes::Bytes;
use hyper::body::{Body, Frame, SizeHint};

pub(super) type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// What a body showed as it passed.
#[derive(Debug, Default)]
pub(super) struct Kept {
    /// The first `cap` bytes; empty once the body went over the cap.
    pub bytes: Vec<u8>,
    /// Every byte that passed.
    pub total: u64,
    /// Over the cap: `bytes` was given up.
    pub over: bool,
    /// Why the body stopped before its end, when it did.
    pub error: Option<String>,
}

/// Run once when the body is done: what was kept, and whether it passed whole.
pub(super) type Then = Box<dyn FnOnce(&Kept, bool) + Send>;

pub(super) struct Tee<B: Body> {
    inner: B,
    cap: usize,
    kept: Arc<Mutex<Kept>>,
    then: Option<Then>,
}

impl<B: Body> Tee<B> {
    pub fn new(inner: B, cap: usize, kept: Arc<Mutex<Kept>>, then: Option<Then>) -> Self {
        Tee {
            inner,
            cap,
            kept,
            then,
        }
    }

    fn keep(&self, data: &[u8]) {
        let mut k = self.kept.lock().unwrap_or_else(|e| e.into_inner());
        k.total += data.len() as u64;
        if k.over {
            return;
        }
        if k.bytes.len() + data.len() > self.cap {
            k.over = true;
            k.bytes = Vec::new();
        } else {
            k.bytes.extend_from_slice(data);
        }
    }

    fn finish(&mut self, whole: bool) {
        if let Some(then) = self.then.take() {
            let k = self.kept.lock().unwrap_or_else(|e| e.into_inner());
            then(&k, whole);
        }
    }
}

impl<B> Body for Tee<B>
where
    B: Body<Data = Bytes> + Unpin,
    B::Error: Into<BoxError>,
{
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        let this = &mut *self;
        match Pin::new(&mut this.inner).poll_frame(cx) {
            Poll::Ready(Some(Ok(frame))) => {
                if let Some(d) = frame.data_ref() {
                    this.keep(d);
                }
                Poll::Ready(Some(Ok(frame)))
            }
            Poll::Ready(Some(Err(e))) => {
                let e: BoxError = e.into();
                this.kept.lock().unwrap_or_else(|p| p.into_inner()).error = Some(e.to_string());
                this.finish(false);
                Poll::Ready(Some(Err(e)))
            }
            Poll::Ready(None) => {
                this.finish(true);
                Poll::Ready(None)
            }
            Poll::Pending => Poll::Pending,
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

impl<B: Body> Drop for Tee<B> {
    fn drop(&mut self) {
        // Dropped before its end was read: whole only if nothing was left to read (an empty
        // body, which the connection need not poll); else the reader went away.
        if self.then.is_some() {
            let whole = self.inner.is_end_stream()
                && self
                    .kept
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .error
                    .is_none();
            self.finish(whole);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body_util::{BodyExt, Full};
    use std::collections::VecDeque;

    /// A body of the given frames, one per poll.
    struct Chunks(VecDeque<Bytes>);

    impl Body for Chunks {
        type Data = Bytes;
        type Error = std::convert::Infallible;
        fn poll_frame(
            mut self: Pin<&mut Self>,
            _: &mut Context<'_>,
        ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
            Poll::Ready(self.0.pop_front().map(|b| Ok(Frame::data(b))))
        }
        fn is_end_stream(&self) -> bool {
            self.0.is_empty()
        }
    }

    fn frames(parts: &[&'static [u8]]) -> Chunks {
        Chunks(parts.iter().map(|p| Bytes::from_static(p)).collect())
    }

    fn rt() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap()
    }

    #[test]
    fn passes_every_byte_keeps_the_first_cap_and_reports_once() {
        rt().block_on(async {
            let kept = Arc::new(Mutex::new(Kept::default()));
            let seen = Arc::new(Mutex::new(Vec::new()));
            let s = seen.clone();
            let tee = Tee::new(
                frames(&[b"abc", b"def"]),
                4,
                kept.clone(),
                Some(Box::new(move |k: &Kept, whole| {
                    s.lock()
                        .unwrap()
                        .push((k.total, k.over, k.bytes.clone(), whole))
                })),
            );
            let all = tee.collect().await.unwrap().to_bytes();
            assert_eq!(&all[..], b"abcdef");
            assert_eq!(*seen.lock().unwrap(), vec![(6, true, Vec::new(), true)]);
        });
    }

    #[test]
    fn a_body_under_the_cap_is_kept_whole() {
        rt().block_on(async {
            let kept = Arc::new(Mutex::new(Kept::default()));
            let tee = Tee::new(frames(&[b"ab", b"c"]), 16, kept.clone(), None);
            tee.collect().await.unwrap();
            let k = kept.lock().unwrap();
            assert_eq!(
                (k.bytes.as_slice(), k.total, k.over),
                (&b"abc"[..], 3, false)
            );
        });
    }

    #[test]
    fn dropped_midway_is_reported_not_whole() {
        rt().block_on(async {
            let kept = Arc::new(Mutex::new(Kept::default()));
            let whole = Arc::new(Mutex::new(None));
            let w = whole.clone();
            let mut tee = Tee::new(
                frames(&[b"ab", b"cd"]),
                16,
                kept,
                Some(Box::new(move |_: &Kept, ok| *w.lock().unwrap() = Some(ok))),
            );
            tee.frame().await.unwrap().unwrap();
            drop(tee);
            assert_eq!(*whole.lock().unwrap(), Some(false));
            // An empty body the reader never polled passed whole.
            let w = whole.clone();
            drop(Tee::new(
                Full::new(Bytes::new()),
                16,
                Arc::new(Mutex::new(Kept::default())),
                Some(Box::new(move |_: &Kept, ok| *w.lock().unwrap() = Some(ok))),
            ));
            assert_eq!(*whole.lock().unwrap(), Some(true));
        });
    }
}
