//! The browser lane's records: shipments to look up, the lease that keeps
//! one holder per resource, and what each browser check saw.

pub mod checks;
pub mod leases;
pub mod shipments;
