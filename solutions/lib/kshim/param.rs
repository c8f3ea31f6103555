// SPDX-License-Identifier: GPL-2.0

//! String module parameters, which `module!` does not offer in Linux 7.3
//! (it takes integers and `bool` only).
//!
//! A C module writes `module_param_string(root, buf, sizeof(buf), 0)`: a
//! `struct kernel_param` in the `__param` section, with the kernel's own
//! `param_ops_string`, which copies the argument into a fixed buffer (and
//! refuses one that does not fit). [`string_param!`] builds the same
//! `kernel_param` the way `module!` builds its integer ones.
//!
//! Part of the kernel shim (`solutions/lib/kshim/`), from stage 28 on. TODO:
//! replace with `module!`'s own string parameters once `kernel::module_param`
//! has them (7.3's `ModuleParam` is implemented for the integer types and
//! `bool` only).

use core::{
    cell::UnsafeCell,
    ffi::CStr, //
};
use kernel::bindings;

// ANCHOR: string_param
/// The buffer of a string parameter: `N` bytes, NUL-terminated.
///
/// # Invariants
///
/// Only the kernel's parameter parser writes the buffer, while the module is
/// being loaded (before `init`; the parameter has permissions 0, so it is not
/// in sysfs and never changes later), and it always leaves a NUL in it.
pub(crate) struct StringParam<const N: usize>(UnsafeCell<[u8; N]>);

// SAFETY: after loading, the buffer is only read (type invariant).
unsafe impl<const N: usize> Sync for StringParam<N> {}

impl<const N: usize> StringParam<N> {
    /// The value: the default, or what `insmod` passed.
    pub(crate) fn value(&self) -> &CStr {
        // SAFETY: nothing writes the buffer after loading (type invariant).
        let buf = unsafe { &*self.0.get() };
        CStr::from_bytes_until_nul(buf).unwrap_or(c"")
    }
}
// ANCHOR_END: string_param

impl<const N: usize> StringParam<N> {
    /// A parameter whose default is `default` (shorter than `N` bytes,
    /// checked at compile time).
    pub(crate) const fn new(default: &[u8]) -> Self {
        assert!(default.len() < N);
        let mut buf = [0u8; N];
        let mut i = 0;
        while i < default.len() {
            buf[i] = default[i];
            i += 1;
        }
        Self(UnsafeCell::new(buf))
    }

    /// Where the parser copies the argument.
    pub(crate) const fn as_mut_ptr(&self) -> *mut u8 {
        self.0.get().cast()
    }
}

/// `struct kparam_string`, which tells `param_ops_string` where the buffer
/// is and how long it is.
#[repr(transparent)]
pub(crate) struct KParamString(pub(crate) bindings::kparam_string);

// SAFETY: it only holds the buffer's address and length, never changed.
unsafe impl Sync for KParamString {}

/// Declares `static $name: StringParam<$len>`, a module parameter named
/// `$cname` that holds a string shorter than `$len` bytes.
macro_rules! string_param {
    ($name:ident, $cname:literal, $len:literal, $default:literal) => {
        pub(crate) static $name: $crate::param::StringParam<$len> =
            $crate::param::StringParam::new($default);
        const _: () = {
            static STRING: $crate::param::KParamString =
                $crate::param::KParamString(::kernel::bindings::kparam_string {
                    maxlen: $len,
                    string: $name.as_mut_ptr().cast(),
                });
            #[link_section = "__param"]
            #[used(compiler)]
            static PARAM: ::kernel::module_param::KernelParam =
                ::kernel::module_param::KernelParam::new(::kernel::bindings::kernel_param {
                    name: ::kernel::str::as_char_ptr_in_const_context($cname),
                    mod_: (&raw const ::kernel::bindings::__this_module).cast_mut(),
                    ops: &raw const ::kernel::bindings::param_ops_string,
                    perm: 0, // Not in sysfs: never changes after loading.
                    level: -1,
                    flags: 0,
                    __bindgen_anon_1: ::kernel::bindings::kernel_param__bindgen_ty_1 {
                        str_: &raw const STRING.0,
                    },
                });
        };
    };
}
pub(crate) use string_param;
