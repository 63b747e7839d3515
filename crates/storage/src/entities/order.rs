use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "orders")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: String,
    pub customer_id: String,
    pub status: String,
    pub currency: String,
    pub total_minor: i64,
    pub payment_reference: String,
    pub placed_at: DateTimeUtc,
    pub delivered_at: Option<DateTimeUtc>,
    /// Incremented on every change; evidence cites the version it read.
    pub version: i64,
    pub updated_at: DateTimeUtc,
    /// The shop's own version of the order (None: not fed by a shop, e.g.
    /// the demo's); a higher one replaces the order. Separate from `version`.
    pub source_version: Option<i64>,
    /// The hash of the content the shop sent at `source_version`.
    pub source_hash: Option<String>,
    pub shipping_minor: i64,
    pub discount_minor: i64,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {
    #[sea_orm(has_many = "super::order_line::Entity")]
    Lines,
    #[sea_orm(has_many = "super::order_refund::Entity")]
    Refunds,
    #[sea_orm(has_many = "super::order_event::Entity")]
    Events,
}

impl Related<super::order_line::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::Lines.def()
    }
}

impl Related<super::order_refund::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::Refunds.def()
    }
}

impl Related<super::order_event::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::Events.def()
    }
}

impl ActiveModelBehavior for ActiveModel {}
