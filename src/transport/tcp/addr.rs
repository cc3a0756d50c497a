//! Which address a rank listens on (and `mpiexec` serves PMI on):
//! `OXMPI_ADDR` names it, `OXMPI_IFACE` names the interface, and by
//! default it is the first IPv4 address of an interface that is up, not
//! loopback, not link-local and not a container or VM bridge (docker0,
//! br-*, virbr*, ...: an address peers on other hosts usually cannot
//! reach); with none of those, loopback (a job on one host).

use crate::err;
use crate::error::MpiResult;
use std::net::{IpAddr, Ipv4Addr, ToSocketAddrs};

/// Interfaces of local bridges, never chosen unless named.
const BRIDGES: [&str; 7] = ["docker", "br-", "virbr", "lxcbr", "lxdbr", "cni", "podman"];

/// The address to listen on, from `addr` (OXMPI_ADDR) or `iface`
/// (OXMPI_IFACE), empty for the default.
pub fn choose(addr: &str, iface: &str) -> MpiResult<IpAddr> {
    if !addr.is_empty() {
        if let Ok(ip) = addr.parse::<IpAddr>() {
            return Ok(ip);
        }
        return match (addr, 0).to_socket_addrs().ok().and_then(|mut a| a.next()) {
            Some(a) => Ok(a.ip()),
            None => err!(Arg, "OXMPI_ADDR={addr} is neither an IP address nor a host name that resolves"),
        };
    }
    let all = if_addrs::get_if_addrs().unwrap_or_default();
    let v4 = |i: &&if_addrs::Interface| matches!(i.ip(), IpAddr::V4(_));
    if !iface.is_empty() {
        return match all.iter().filter(v4).find(|i| i.name == iface) {
            Some(i) => Ok(i.ip()),
            None => {
                let names: Vec<&str> = all.iter().filter(v4).map(|i| i.name.as_str()).collect();
                err!(
                    Arg,
                    "OXMPI_IFACE={iface}: no such interface with an IPv4 address (there are: {})",
                    names.join(", ")
                )
            }
        };
    }
    let usable = |i: &&if_addrs::Interface| {
        v4(i) && !i.is_loopback() && !i.is_link_local() && !BRIDGES.iter().any(|b| i.name.starts_with(b))
    };
    Ok(all.iter().find(usable).map_or(IpAddr::V4(Ipv4Addr::LOCALHOST), |i| i.ip()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn named_addresses_win_and_bridges_lose() {
        assert_eq!(choose("10.1.2.3", "").unwrap(), "10.1.2.3".parse::<IpAddr>().unwrap());
        assert!(choose("localhost", "").unwrap().is_loopback());
        assert!(choose("", "no-such-iface0").is_err());
        assert_eq!(choose("", "lo").unwrap(), IpAddr::V4(Ipv4Addr::LOCALHOST));
        let ip = choose("", "").unwrap();
        let name = if_addrs::get_if_addrs().unwrap().into_iter().find(|i| i.ip() == ip).map(|i| i.name);
        assert!(name.is_none_or(|n| !BRIDGES.iter().any(|b| n.starts_with(b))));
    }
}
