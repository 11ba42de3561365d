//! A service wrapper that prepends a path prefix to every request, so an in-process kube
//! client can address one logical cluster (`/clusters/<name>`) of the router.

use std::task::{Context, Poll};

use http::{Request, Uri};

#[derive(Clone)]
pub struct Prefixed<S> {
    inner: S,
    prefix: String,
}

impl<S> Prefixed<S> {
    pub fn new(inner: S, prefix: String) -> Self {
        Self { inner, prefix }
    }
}

impl<S, B> tower::Service<Request<B>> for Prefixed<S>
where
    S: tower::Service<Request<B>>,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = S::Future;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut req: Request<B>) -> Self::Future {
        let pq = req.uri().path_and_query().map(|p| p.as_str()).unwrap_or("/");
        if let Ok(uri) = format!("{}{pq}", self.prefix).parse::<Uri>() {
            *req.uri_mut() = uri;
        }
        self.inner.call(req)
    }
}
