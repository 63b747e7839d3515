pub mod copy_button;
pub mod handover_bar;
pub mod nav;
pub mod order_card;
pub mod proposal_card;
