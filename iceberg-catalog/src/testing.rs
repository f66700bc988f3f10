//! Test support for the catalogs above and for users' own tests (feature `testing`): a real
//! Iceberg REST catalog server to run against ([`RestServer`], rustberg), and a loopback proxy
//! that injects faults between a client and it ([`FaultProxy`]).

pub mod fault_proxy;
pub mod rest_server;

pub use fault_proxy::{Fault, FaultProxy};
pub use rest_server::RestServer;
