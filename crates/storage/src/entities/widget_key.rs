use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "widget_keys")]
pub struct Model {
    /// The `kid` a host site names in its token header.
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: String,
    pub site_id: String,
    /// Ed25519 public key, base64url without padding; the private half is
    /// shown to the admin once and never stored.
    pub public_key: String,
    pub created_by: String,
    pub created_at: DateTimeUtc,
    pub revoked_at: Option<DateTimeUtc>,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
