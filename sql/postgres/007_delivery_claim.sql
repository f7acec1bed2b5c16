-- A claim of a delivery carries a token of its own (src/oltp/deliveries.repo.ts). The outcome of
-- an attempt is written only while the row still carries the token of the claim that made it: a
-- worker whose lease expired (and whose delivery was claimed again) cannot overwrite the result of
-- the worker that holds it now. Cleared with the lease when the attempt's outcome is recorded.
alter table deliveries add column claim_token uuid;
