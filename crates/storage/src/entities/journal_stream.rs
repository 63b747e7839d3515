use sea_orm::entity::prelude::*;

/// The head of one stream's hash chain.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "journal_streams")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub stream: String,
    pub length: i64,
    pub head_hash: String,
    /// Changed since the last checkpoint.
    pub dirty: bool,
    pub updated_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
