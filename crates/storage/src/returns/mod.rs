//! The returns desk's records.

pub mod parcels;
