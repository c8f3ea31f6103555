// SPDX-License-Identifier: GPL-2.0
/*
 * override_creds(), revert_creds() and current_cred() are static inline
 * functions (or a macro) in <linux/cred.h>: bindgen generates no binding for
 * them, and the kernel's own rust/helpers/ has none for them either. In the
 * kernel tree the fix would be three rust_helper_ functions; an out-of-tree
 * module carries its own. Nothing else in this module is C.
 */
#include <linux/cred.h>

const struct cred *r9p_override_creds(const struct cred *new);
const struct cred *r9p_revert_creds(const struct cred *old);
const struct cred *r9p_current_cred(void);

/* Installs @new as current's subjective credentials; returns the old ones. */
const struct cred *r9p_override_creds(const struct cred *new)
{
	return override_creds(new);
}

/* Puts back what r9p_override_creds() returned; returns what it replaces. */
const struct cred *r9p_revert_creds(const struct cred *old)
{
	return revert_creds(old);
}

/* current_cred(): the credentials the VFS checks. */
const struct cred *r9p_current_cred(void)
{
	return current_cred();
}
