//! Policy documents: versioned storage (in `storage::policies`), citable
//! sections, and full-text search over the versions in force.

pub mod index;
pub mod library;
pub mod review;
pub mod sections;

pub use index::{PolicyHit, PolicyIndex};
pub use library::{PolicyError, PolicyLibrary, Reviewed};
pub use sections::split_sections;
