// The one place PostgreSQL's C headers enter C++. Include the plain C++ core headers first: they
// refuse to compile once postgres.h is in (the core must stay free of PostgreSQL).
#pragma once

extern "C" {
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "tcop/dest.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/numeric.h"
#include "utils/tuplestore.h"
}
