//! Criterion benchmark of every app (see the end of this work).

fn main() {}
