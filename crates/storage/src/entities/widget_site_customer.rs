use sea_orm::entity::prelude::*;

/// A customer a widget site may sign in (its host tokens may name them).
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "widget_site_customers")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub site_id: String,
    #[sea_orm(primary_key, auto_increment = false)]
    pub customer_id: String,
    pub bound_by: String,
    pub bound_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
