//! What every binding's web middleware shares, written once: the header
//! values of a key decision and the client key of a request.

#![forbid(unsafe_code)]
