#include "engine/mapped_file.hpp"
