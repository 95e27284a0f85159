-- Databases made before this index may hold a second fork of a repository by the same owner:
-- the oldest fork stays a fork, later ones become independent repositories (as when a base is deleted).
UPDATE `repository` SET `is_fork` = 0, `fork_id` = 0 WHERE `fork_id` <> 0 AND `id` NOT IN (SELECT MIN(`id`) FROM `repository` WHERE `fork_id` <> 0 GROUP BY `owner_id`, `fork_id`);--> statement-breakpoint
CREATE UNIQUE INDEX `UQE_repository_fork` ON `repository` (`owner_id`,`fork_id`) WHERE fork_id <> 0;
