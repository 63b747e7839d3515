//! The socket the server accepts connections on.

use axum::serve::{ListenerExt, TapIo};
use tokio::net::{TcpListener, TcpStream};

/// Connections as the server accepts them.
pub type Accepting = TapIo<TcpListener, fn(&mut TcpStream)>;

/// Every accepted connection with Nagle's algorithm off. Pages are streamed
/// in chunks; with it on, a page's small last chunk waits until the client
/// acknowledges the one before, and clients hold that acknowledgement back
/// for up to 40 ms: a near-empty `/queue` tab took 44 ms at one connection
/// instead of 7. axum 0.8 leaves the option as the system sets it.
pub fn without_delayed_chunks(listener: TcpListener) -> Accepting {
    listener.tap_io(send_at_once)
}

fn send_at_once(connection: &mut TcpStream) {
    if let Err(error) = connection.set_nodelay(true) {
        tracing::debug!(%error, "TCP_NODELAY could not be set on a connection");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::serve::Listener;

    #[tokio::test]
    async fn a_streamed_page_is_not_held_back_by_nagles_algorithm() {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        let mut accepting = without_delayed_chunks(listener);
        let client = TcpStream::connect(address);

        let ((connection, _), _client) = tokio::join!(accepting.accept(), client);

        assert!(connection.nodelay().unwrap());
    }
}
