//! `Duration` as whole milliseconds or seconds in JSON and TOML, instead of
//! serde's `{secs, nanos}` shape.

use std::time::Duration;

use serde::{Deserialize, Deserializer, Serializer};

fn saturating_millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

pub mod millis {
    use super::{Deserialize, Deserializer, Duration, Serializer, saturating_millis};

    /// # Errors
    /// Never fails beyond the serializer's own errors.
    pub fn serialize<S: Serializer>(duration: &Duration, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_u64(saturating_millis(*duration))
    }

    /// # Errors
    /// When the value is not an unsigned integer.
    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Duration, D::Error> {
        u64::deserialize(deserializer).map(Duration::from_millis)
    }
}

pub mod secs {
    use super::{Deserialize, Deserializer, Duration, Serializer};

    /// # Errors
    /// Never fails beyond the serializer's own errors.
    pub fn serialize<S: Serializer>(duration: &Duration, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_u64(duration.as_secs())
    }

    /// # Errors
    /// When the value is not an unsigned integer.
    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Duration, D::Error> {
        u64::deserialize(deserializer).map(Duration::from_secs)
    }
}

pub mod option_millis {
    use super::{Deserialize, Deserializer, Duration, Serializer, saturating_millis};

    /// # Errors
    /// Never fails beyond the serializer's own errors.
    pub fn serialize<S: Serializer>(
        duration: &Option<Duration>,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        match duration {
            Some(duration) => serializer.serialize_some(&saturating_millis(*duration)),
            None => serializer.serialize_none(),
        }
    }

    /// # Errors
    /// When the value is neither null nor an unsigned integer.
    pub fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Option<Duration>, D::Error> {
        Option::<u64>::deserialize(deserializer).map(|ms| ms.map(Duration::from_millis))
    }
}
