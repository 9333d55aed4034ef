#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include "targets/target_kind.hpp"

// The command line offers the table's kinds of target, as main installs them.
static const bool kinds_installed = (rlcheck::targets::install_kinds(), true);
