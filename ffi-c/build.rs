//! Names libsds.so's ABI version (its SONAME) on Linux, so that a program
//! linked against it records `libsds.so.<abi>` and a later, incompatible
//! libsds installed beside it is not loaded in its place. Before 1.0 every
//! minor release may break the ABI, so the ABI version is `0.<minor>`;
//! from 1.0 on it is the major version.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() != Ok("linux") {
        return;
    }
    let major = std::env::var("CARGO_PKG_VERSION_MAJOR").expect("cargo sets it");
    let minor = std::env::var("CARGO_PKG_VERSION_MINOR").expect("cargo sets it");
    let abi = if major == "0" {
        format!("0.{minor}")
    } else {
        major
    };
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libsds.so.{abi}");
}
