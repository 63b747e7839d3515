//! Opaque, prefixed, time-ordered ids (`usr_…`, `prp_…`). Callers must not
//! parse them; the prefix only helps a person reading logs.

pub fn new_id(prefix: &str) -> String {
    format!("{prefix}_{}", uuid::Uuid::now_v7().simple())
}

#[cfg(test)]
mod tests {
    #[test]
    fn ids_carry_their_prefix_and_are_unique() {
        let a = super::new_id("prp");
        let b = super::new_id("prp");
        assert!(a.starts_with("prp_"));
        assert_ne!(a, b);
    }
}
