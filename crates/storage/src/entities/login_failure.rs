use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "login_failures")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    /// `account:NAME` or `address:IP`.
    pub scope: String,
    pub failed_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
