//! Serving channels: the topic bus and the hub that runs implemented channels for their subscribers.
