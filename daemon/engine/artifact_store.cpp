#include "engine/artifact_store.hpp"
