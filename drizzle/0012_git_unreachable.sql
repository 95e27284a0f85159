ALTER TABLE `repository` ADD `git_unreachable` integer DEFAULT false NOT NULL;--> statement-breakpoint
-- Repositories stored before this column cannot tell whether a ref was ever deleted or forced: their clones walk history.
UPDATE `repository` SET `git_unreachable` = 1 WHERE `is_empty` = 0;
