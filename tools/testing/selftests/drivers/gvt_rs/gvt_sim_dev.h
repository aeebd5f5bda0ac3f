/* SPDX-License-Identifier: GPL-2.0 */
/* Transitional: the protocol is <linux/gvt_rs_sim.h>. */
#include <linux/gvt_rs_sim.h>
