// SPDX-License-Identifier: GPL-2.0
//! Scenario tests of the scheduler.
