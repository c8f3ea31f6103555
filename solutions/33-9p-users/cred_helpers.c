// SPDX-License-Identifier: GPL-2.0
/*
 * override_creds(), revert_creds() and current_cred() are static inline
 * functions (or a macro) in <linux/cred.h>: bindgen generates no binding for
 * them, and the kernel's own rust/helpers/ has none for them either. In the
 * kernel tree the fix would be three rust_helper_ functions; an out-of-tree
 * module carries its own. r9p_set_groups() fills a struct group_info, whose
 * layout is randomized (__randomize_layout) and ends in a flexible array,
 * and drops its reference with put_group_info(), a macro. Nothing else in
 * this module is C.
 */
/* ANCHOR: helpers */
#include <linux/cred.h>

const struct cred *r9p_override_creds(const struct cred *new);
const struct cred *r9p_revert_creds(const struct cred *old);
const struct cred *r9p_current_cred(void);
int r9p_set_groups(struct cred *new, const u32 *gids, int n);

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

/*
 * Gives @new, prepared and not yet shared, the supplementary groups @gids
 * (@n of them, in the initial user namespace). 0 or -ENOMEM.
 */
int r9p_set_groups(struct cred *new, const u32 *gids, int n)
{
	struct group_info *groups = groups_alloc(n);
	int i;

	if (!groups)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		groups->gid[i] = KGIDT_INIT(gids[i]);
	groups_sort(groups); /* in_group_p() searches them by bisection */
	set_groups(new, groups); /* takes a reference of its own */
	put_group_info(groups);
	return 0;
}
/* ANCHOR_END: helpers */
