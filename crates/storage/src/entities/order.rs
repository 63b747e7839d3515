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
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {
    #[sea_orm(has_many = "super::order_line::Entity")]
    Lines,
    #[sea_orm(has_many = "super::order_refund::Entity")]
    Refunds,
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

impl ActiveModelBehavior for ActiveModel {}
