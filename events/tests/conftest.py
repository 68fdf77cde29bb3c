# The portal's fixtures (developers, staff, eager tasks, captured emails) serve these tests too.
from accounts.tests.conftest import (  # noqa: F401
    _fast_password_hashing,
    eager_tasks,
    make_account,
    sent,
    staff_client,
)
