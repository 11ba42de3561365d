//! (being written)

use std::sync::Arc;

use crate::{Context, Running};

pub fn controller(ctx: &Arc<Context>) -> Running {
    let _ = ctx;
    Box::pin(async {})
}
